//! The TUI's slash commands and keys end to end: the real `interpreter` in a pseudo-terminal
//! against the scripted mock model. Each test checks the effect where it lands — what the
//! mock received, what the thread store or the disk holds — not only the screen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::tui_pty;

use common::*;
use oi_test_support::MockTurn;
use serde_json::json;
use tui_pty::*;

#[tokio::test(flavor = "multi_thread")]
async fn slash_model_picks_a_model_and_effort_for_the_next_request() {
    let env = env([
        MockTurn::text("first answer"),
        MockTurn::text("second answer"),
        MockTurn::text("third answer"),
    ])
    .await;
    // gpt-oss has low/medium/high efforts in the built-in catalog; the mock's `/models`
    // adds `mock-model`.
    let tui = Tui::spawn(&env, &["-m", "gpt-oss-20b"]);
    tui.wait_for("Ask anything");
    turn(&tui, "one", "first answer");
    command(&tui, "/model");
    tui.wait_for("Choose a model");
    tui.type_text("high");
    tui.wait_for("gpt-oss-20b high");
    tui.send("\r");
    tui.wait_for("Model set to gpt-oss-20b (high)");
    turn(&tui, "two", "second answer");
    command(&tui, "/model");
    tui.wait_for("Choose a model");
    tui.type_text("mock-mo");
    tui.send("\r");
    tui.wait_for("Model set to mock-model");
    turn(&tui, "three", "third answer");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0].model(), Some("gpt-oss-20b"));
    assert_ne!(reqs[0].body["reasoning_effort"], "high");
    assert_eq!(reqs[1].model(), Some("gpt-oss-20b"));
    assert_eq!(
        reqs[1].body["reasoning_effort"], "high",
        "{:?}",
        reqs[1].body
    );
    assert_eq!(reqs[2].model(), Some("mock-model"));
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_resume_searches_picks_and_shows_the_history() {
    let env = env([
        MockTurn::text("the alpha answer"),
        MockTurn::text("the beta answer"),
        MockTurn::text("continued"),
    ])
    .await;
    for prompt in ["alpha question", "beta question"] {
        let out = env.run(&["exec", prompt]).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    command(&tui, "/resume");
    tui.wait_for("Resume a thread");
    tui.wait_for("beta question");
    tui.type_text("alpha");
    tui.wait_until("the search to leave only alpha", |t| {
        let picker = t.rsplit("Resume a thread").next().unwrap_or_default();
        picker.contains("alpha question") && !picker.contains("beta question")
    });
    tui.send("\r");
    tui.wait_for("› alpha question");
    tui.wait_for("the alpha answer");
    turn(&tui, "go on", "continued");
    let reqs = env.mock.requests();
    let last = reqs.last().unwrap().all_text();
    assert!(
        last.contains("the alpha answer"),
        "alpha history not resumed"
    );
    assert!(
        !last.contains("the beta answer"),
        "resumed the wrong thread"
    );
    quit(tui);
    // The two threads from `exec`: resuming adds none, and the empty thread the TUI opened
    // on is not kept.
    assert_eq!(stored_thread_ids(&env).len(), 2);
}

/// The thread ids the TUI's headers showed, in order.
fn header_ids(screen: &str) -> Vec<String> {
    screen
        .lines()
        .filter_map(|l| l.trim().strip_prefix("thread "))
        .map(|s| s.trim().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_fork_continues_a_copy_and_slash_new_starts_empty() {
    let env = env([
        MockTurn::text("answer one"),
        MockTurn::text("answer in the fork"),
        MockTurn::text("answer in the new thread"),
    ])
    .await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "question one", "answer one");
    command(&tui, "/fork");
    let screen = tui.wait_until("a second header", |t| header_ids(t).len() == 2);
    let ids = header_ids(&screen);
    assert_ne!(ids[0], ids[1], "/fork kept the same thread");
    turn(&tui, "question two", "answer in the fork");
    command(&tui, "/new");
    tui.wait_until("a third header", |t| header_ids(t).len() == 3);
    turn(&tui, "question three", "answer in the new thread");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 3);
    assert!(
        reqs[1].all_text().contains("answer one"),
        "the fork lost the history"
    );
    assert!(
        !reqs[2].all_text().contains("answer one"),
        "/new carried the old history"
    );
    quit(tui);
    let stored = stored_thread_ids(&env);
    assert_eq!(stored.len(), 3, "{stored:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_compact_summarises_and_shows_the_marker() {
    let env = env([
        MockTurn::text("a long answer worth summarising"),
        MockTurn::text("SUMMARY: the user asked and got an answer"),
        MockTurn::text("after compaction"),
    ])
    .await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "first", "a long answer worth summarising");
    command(&tui, "/compact");
    tui.wait_for("Context compacted");
    turn(&tui, "next", "after compaction");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 3);
    assert!(
        reqs[2].all_text().contains("SUMMARY: the user asked"),
        "the next request does not carry the summary"
    );
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_init_has_the_model_write_agents_md() {
    let patch = "*** Begin Patch\n*** Add File: AGENTS.md\n+# Notes for agents\n*** End Patch";
    let env = env([
        MockTurn::tool_call("apply_patch", json!({"input": patch})),
        MockTurn::text("wrote AGENTS.md"),
    ])
    .await;
    let tui = Tui::spawn(&env, &["-s", "danger-full-access", "-a", "never"]);
    tui.wait_for("Ask anything");
    command(&tui, "/init");
    tui.wait_for("wrote AGENTS.md");
    let agents = env.work().join("AGENTS.md");
    assert_eq!(read(&agents), "# Notes for agents\n");
    assert!(
        env.mock.requests()[0]
            .all_text()
            .contains("Create an AGENTS.md")
    );
    // A second /init leaves the file alone and asks nothing of the model.
    tui.wait_until("the turn to end", |t| !t.contains("Esc to interrupt"));
    command(&tui, "/init");
    tui.wait_for("AGENTS.md already exists");
    assert_eq!(env.mock.requests().len(), 2);
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_logout_removes_the_stored_key() {
    let env = env([MockTurn::text("unused")]).await;
    // The mock's provider table is the last one in config.toml: give it an `env_key`.
    let config = env.home.path().join("config.toml");
    let mut text = read(&config);
    text.push_str("env_key = \"OI_TUI_TEST_KEY\"\n");
    std::fs::write(&config, text).unwrap();
    let creds = env.home.path().join(".credentials.json");
    std::fs::write(
        &creds,
        json!({"api_keys": {"OI_TUI_TEST_KEY": "sk-test-123", "OTHER_KEY": "keep"}}).to_string(),
    )
    .unwrap();
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    command(&tui, "/logout");
    tui.wait_for("Removed the stored key for OI_TUI_TEST_KEY");
    let left = read(&creds);
    assert!(!left.contains("sk-test-123"), "{left}");
    assert!(left.contains("OTHER_KEY"), "other keys must stay: {left}");
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_approvals_switches_to_asking() {
    let env = env([
        MockTurn::tool_call("shell", json!({"command": ["touch", "made.txt"]})),
        MockTurn::text("the model went on"),
    ])
    .await;
    // Starts never asking; the "Ask for everything" preset must make the next command ask.
    let tui = Tui::spawn(&env, &["-s", "danger-full-access", "-a", "never"]);
    tui.wait_for("danger-full-access · never");
    command(&tui, "/approvals");
    tui.wait_for("Full access");
    tui.type_text("everything");
    tui.send("\r");
    tui.wait_for("Approvals: Ask for everything");
    tui.wait_for("workspace-write · untrusted");
    tui.type_text("make a file");
    tui.send("\r");
    tui.wait_for("Run this command?");
    tui.send("n");
    tui.wait_for("`touch made.txt` denied");
    tui.wait_for("the model went on");
    assert!(!env.work().join("made.txt").exists());
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_diff_shows_changes_and_untracked_files() {
    let env = env([MockTurn::text("unused")]).await;
    let work = env.work();
    git(&work, &["init", "-q"]);
    std::fs::write(work.join("kept.txt"), "old line\n").unwrap();
    git(&work, &["add", "."]);
    git(
        &work,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qm",
            "init",
        ],
    );
    std::fs::write(work.join("kept.txt"), "new line\n").unwrap();
    std::fs::write(work.join("fresh.txt"), "brand new\n").unwrap();
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    command(&tui, "/diff");
    // The diff opens in the pager, each line with its number in the file.
    tui.wait_for("── git diff: 2 file(s) +2 -1");
    let screen = tui.rows().join("\n");
    for needle in ["1 -old line", "1 +new line", "1 +brand new", "fresh.txt"] {
        assert!(screen.contains(needle), "{needle} missing:\n{screen}");
    }
    // Esc closes it; the scrollback keeps one line about it.
    tui.send("\x1b");
    tui.wait_for("shown in the pager; /diff opens it again");
    assert!(env.mock.requests().is_empty());
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_status_shows_the_thread_and_the_transcript_opens_with_ctrl_t() {
    let env = env([MockTurn::text("an answer for the transcript")]).await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "a question", "an answer for the transcript");
    command(&tui, "/status");
    let screen = tui.wait_for("thread    ");
    let id = header_ids(&screen).remove(0);
    assert!(screen.contains(&format!("thread    {id}")), "{screen}");
    assert!(screen.contains("model     mock-model via mock"), "{screen}");
    tui.send("\x14"); // Ctrl+T
    tui.wait_for("── Transcript (");
    let rows = tui.rows().join("\n");
    assert!(rows.contains("› a question"), "{rows}");
    assert!(rows.contains("an answer for the transcript"), "{rows}");
    tui.send("\x1b");
    tui.wait_until("the transcript to close", |_| {
        let rows = tui.rows().join("\n");
        !rows.contains("── Transcript (") && rows.contains("Ask anything")
    });
    tui.send("\x04"); // Ctrl+D on the empty composer
    let mut tui = tui;
    assert_eq!(tui.wait_exit(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_live_area_is_only_as_tall_as_its_content() {
    // Thirty paragraphs, streamed; the stream stalls before the last ones.
    let answer: String = (1..=30)
        .map(|i| format!("paragraph {i:02} says something.\n\n"))
        .collect();
    let env = env([MockTurn::text(answer).chunked(30).stall_after(25)]).await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    // Idle: the header, then the composer right under it (no blank rows in between).
    let rows = tui.rows();
    let composer = rows
        .iter()
        .position(|r| r.contains("Ask anything"))
        .unwrap();
    assert!(
        rows[..composer]
            .iter()
            .filter(|r| r.trim().is_empty())
            .count()
            <= 2,
        "blank rows above the composer:\n{}",
        rows.join("\n")
    );
    tui.type_text("write a lot");
    tui.send("\r");
    // While the answer still streams, its finished paragraphs are already in the
    // scrollback, even those the live area could never have held.
    tui.wait_for("paragraph 20");
    let screen = tui.text();
    assert!(screen.contains("Esc to interrupt"), "{screen}");
    assert!(screen.contains("paragraph 01"), "{screen}");
    tui.send("\x1b");
    tui.wait_for("turn interrupted");
    let screen = tui.text();
    for i in 1..=20 {
        let p = format!("paragraph {i:02}");
        assert_eq!(
            screen.matches(&p).count(),
            1,
            "{p} not shown once:\n{screen}"
        );
    }
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn resizing_to_60_columns_relays_out_the_live_area() {
    let env = env([
        MockTurn::text("before the resize"),
        MockTurn::text("after the resize, the answer wraps to the new width of the screen"),
    ])
    .await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "first", "before the resize");
    tui.resize(30, 60);
    let rule = "─".repeat(60);
    tui.wait_until("the live area at 60 columns", |_| {
        tui.rows().iter().any(|r| r.trim_end() == rule)
    });
    turn(&tui, "second", "the answer wraps");
    // The frame after the turn's end may still be on its way: wait for the composer.
    tui.wait_until("the composer after the turn", |_| {
        tui.rows().iter().any(|r| r.contains("Ask anything"))
    });
    let rows = tui.rows();
    let joined = rows.join("\n");
    // One composer, one status line, one rule: nothing of the 100-column layout is left.
    assert_eq!(joined.matches("Ask anything").count(), 1, "{joined}");
    assert_eq!(
        rows.iter().filter(|r| r.trim_end() == rule).count(),
        1,
        "{joined}"
    );
    let status = rows.iter().rposition(|r| !r.trim().is_empty()).unwrap();
    assert!(rows[status].contains("mock-model"), "{joined}");
    quit(tui);
}

// Keys typed in the same instant as a resize: the resize signal and the tty's bytes reach
// the input reader together. With crossterm's default (edge-triggered) reader this lost the
// keys until the next key press in about 1 run in 4 on a loaded machine; see the crossterm
// features in crates/tui/Cargo.toml.
#[tokio::test(flavor = "multi_thread")]
async fn keys_typed_during_a_resize_are_seen_at_once() {
    let env = env([MockTurn::text("answered after the resize")]).await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    for (rows, cols) in [(30, 60), (40, 100), (30, 60)] {
        tui.resize(rows, cols);
        tui.send("x");
    }
    tui.wait_for("xxx");
    // Erase them and ask, again together with a resize.
    tui.send("\x7f\x7f\x7f");
    tui.wait_until("the composer to be empty", |t| t.contains("Ask anything"));
    tui.resize(30, 70);
    tui.send("now\r");
    tui.wait_for("answered after the resize");
    let rule = "─".repeat(70);
    tui.wait_until("the live area at 70 columns", |_| {
        tui.rows().iter().any(|r| r.trim_end() == rule)
    });
    assert_eq!(env.mock.requests().len(), 1);
    quit(tui);
}

// A pty whose size was never set reports 0×0. The UI lays out for 80×24 then, instead of
// hanging in the first history insert, and takes the real size when it comes.
#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_that_reports_no_size_still_works() {
    let env = env([
        MockTurn::text("answered on a screen of no size"),
        MockTurn::text("answered at the real size"),
    ])
    .await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    tui.set_pty_size(0, 0);
    turn(&tui, "first", "answered on a screen of no size");
    tui.resize(ROWS, COLS);
    turn(&tui, "second", "answered at the real size");
    assert_eq!(env.mock.requests().len(), 2);
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn no_color_draws_without_colours() {
    let answer = "Some **bold** text and code:\n\n```rust\nfn main() { println!(\"hi\"); }\n```\n";
    let env = env([MockTurn::text(answer), MockTurn::text(answer)]).await;
    // The same screen with colours, so the check below can fail.
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "show code", "fn main()");
    assert!(!tui.coloured_cells().is_empty(), "expected colours");
    quit(tui);
    let tui = Tui::spawn_with(&env, &[], &[("NO_COLOR", "1")]);
    tui.wait_for("Ask anything");
    turn(&tui, "show code", "fn main()");
    let coloured = tui.coloured_cells();
    assert!(
        coloured.is_empty(),
        "coloured cells with NO_COLOR: {:?}",
        &coloured[..coloured.len().min(10)]
    );
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn at_opens_the_file_picker_and_tab_inserts_the_path() {
    let env = env([MockTurn::text("read it")]).await;
    std::fs::create_dir_all(env.work().join("src")).unwrap();
    std::fs::write(env.work().join("src/parser_impl.rs"), "fn parse() {}\n").unwrap();
    std::fs::write(env.work().join("notes.txt"), "x\n").unwrap();
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    tui.type_text("look at @parsimp");
    tui.wait_for("src/parser_impl.rs");
    tui.send("\t");
    tui.wait_until("the path in the composer", |t| {
        t.lines()
            .any(|l| l.trim_end() == "› look at src/parser_impl.rs")
    });
    tui.send("\r");
    tui.wait_for("read it");
    assert!(
        env.mock.requests()[0]
            .all_text()
            .contains("look at src/parser_impl.rs")
    );
    // `/mention` opens the same picker.
    command(&tui, "/mention");
    tui.type_text("notes");
    tui.wait_for("notes.txt");
    tui.send("\x03"); // Ctrl+C clears the composer
    tui.wait_for("Ask anything");
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn resume_without_an_id_opens_the_picker() {
    let env = env([MockTurn::text("stored answer"), MockTurn::text("more")]).await;
    let out = env.run(&["exec", "a stored question"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let tui = Tui::spawn(&env, &["resume"]);
    tui.wait_for("Resume a thread");
    tui.wait_for("a stored question");
    tui.send("\r");
    tui.wait_for("› a stored question");
    turn(&tui, "and then?", "more");
    assert!(env.mock.requests()[1].all_text().contains("stored answer"));
    quit(tui);
}
