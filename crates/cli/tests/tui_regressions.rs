//! Bugs of the TUI's second pass (issue 27), each driven end to end: the real `interpreter`
//! in a pseudo-terminal against the scripted mock model, the effect checked where it lands
//! (the screen, what the mock received, the thread store, the disk).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::tui_pty;

use common::*;
use oi_test_support::MockTurn;
use tui_pty::*;

const DOWN: &str = "\x1b[B";

/// Waits until the highlighted (reverse-video) row on screen shows `name`.
fn wait_highlighted(tui: &Tui, name: &str) {
    tui.wait_until(&format!("/{name} highlighted"), |_| {
        tui.highlighted_rows()
            .iter()
            .any(|r| r.trim_start().starts_with(&format!("/{name} ")))
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn the_slash_popup_scrolls_to_keep_the_selection_visible() {
    let env = env([MockTurn::text("unused")]).await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    tui.type_text("/");
    // The popup lists the commands in this order; 8 rows show at once.
    let order = [
        "model",
        "harness",
        "approvals",
        "new",
        "clear",
        "resume",
        "fork",
        "archive",
        "delete",
        "compact",
        "diff",
        "plan",
        "mention",
        "status",
        "statusline",
    ];
    wait_highlighted(&tui, order[0]);
    for name in &order[1..] {
        tui.send(DOWN);
        wait_highlighted(&tui, name);
    }
    // Back up one, to `/status`; Enter runs what is highlighted.
    tui.send("\x1b[A");
    wait_highlighted(&tui, "status");
    tui.send("\r");
    tui.wait_for("tokens    ");
    // Typing filters the list.
    tui.type_text("/lo");
    wait_highlighted(&tui, "logout");
    tui.send("\x15"); // Ctrl+U clears the line
    tui.wait_until("the popup to close", |_| tui.highlighted_rows().is_empty());
    quit(tui);
    assert!(env.mock.requests().is_empty());
}

/// How many thread headers the screen and scrollback show.
fn headers(screen: &str) -> usize {
    screen
        .lines()
        .filter(|l| l.trim().starts_with("thread "))
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_approvals_choice_holds_across_new_and_fork() {
    let env = env([
        MockTurn::text("first answer"),
        MockTurn::tool_call("shell", serde_json::json!({"command": ["touch", "a.txt"]})),
        MockTurn::text("went on after a"),
        MockTurn::tool_call("shell", serde_json::json!({"command": ["touch", "b.txt"]})),
        MockTurn::text("went on after b"),
    ])
    .await;
    // Starts never asking; "Ask for everything" must keep asking in the next threads.
    let tui = Tui::spawn(&env, &["-s", "danger-full-access", "-a", "never"]);
    tui.wait_for("danger-full-access · never");
    command(&tui, "/approvals");
    tui.wait_for("Full access");
    tui.type_text("everything");
    tui.send("\r");
    tui.wait_for("Approvals: Ask for everything");
    // A turn in this thread takes the choice along; the next thread must still have it.
    turn(&tui, "hello", "first answer");
    command(&tui, "/new");
    tui.wait_until("a second header", |t| headers(t) == 2);
    tui.wait_for("workspace-write · untrusted");
    tui.type_text("make a");
    tui.send("\r");
    tui.wait_for("Run this command?");
    tui.send("n");
    tui.wait_for("`touch a.txt` denied");
    tui.wait_for("went on after a");
    tui.wait_until("the turn to end", |t| !t.contains("Esc to interrupt"));
    command(&tui, "/fork");
    tui.wait_until("a third header", |t| headers(t) == 3);
    tui.type_text("make b");
    tui.send("\r");
    tui.wait_for("Run this command?");
    tui.send("n");
    tui.wait_for("`touch b.txt` denied");
    tui.wait_for("went on after b");
    assert!(!env.work().join("a.txt").exists());
    assert!(!env.work().join("b.txt").exists());
    quit(tui);
}

/// The tool names the model was offered in request `i`.
fn offered_tools(env: &TestEnv, i: usize) -> Vec<String> {
    let requests = env.mock.requests();
    requests[i].body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_harness_choice_holds_across_new() {
    let env = env([
        MockTurn::text("first answer"),
        MockTurn::text("second answer"),
    ])
    .await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    command(&tui, "/harness");
    tui.wait_for("claude-code");
    tui.type_text("claude");
    tui.send("\r");
    tui.wait_for("Harness: claude-code");
    turn(&tui, "hello", "first answer");
    command(&tui, "/new");
    tui.wait_until("a second header", |t| headers(t) == 2);
    turn(&tui, "hello again", "second answer");
    // Both threads' requests offered Claude Code's tools, not Codex's `shell`.
    for i in 0..2 {
        let tools = offered_tools(&env, i);
        assert!(tools.iter().any(|t| t == "Bash"), "request {i}: {tools:?}");
        assert!(
            !tools.iter().any(|t| t == "shell"),
            "request {i}: {tools:?}"
        );
    }
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn threads_nobody_wrote_in_are_not_stored_or_offered_to_resume() {
    let env = env([MockTurn::text("the only answer")]).await;
    // Open and leave at once: nothing stored, no resume hint for a thread with nothing in it.
    let mut tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    command(&tui, "/quit");
    assert_eq!(tui.wait_exit(), 0);
    assert!(
        !tui.text().contains("Resume this thread with"),
        "{}",
        tui.text()
    );
    assert_eq!(stored_thread_ids(&env), Vec::<String>::new());
    // A thread with a question is kept; the empty one `/new` opened after it is not.
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "the only question", "the only answer");
    command(&tui, "/new");
    tui.wait_until("a second header", |t| headers(t) == 2);
    quit(tui);
    assert_eq!(stored_thread_ids(&env).len(), 1);
    // `interpreter resume` opens the picker on a new thread: it lists the one stored
    // thread, and picking it leaves no empty thread behind.
    let tui = Tui::spawn(&env, &["resume"]);
    tui.wait_for("Resume a thread");
    let screen = tui.wait_for("the only question");
    assert!(!screen.contains("(no messages)"), "{screen}");
    tui.send("\r");
    tui.wait_for("› the only question");
    quit(tui);
    assert_eq!(stored_thread_ids(&env).len(), 1);
}

fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[tokio::test(flavor = "multi_thread")]
async fn the_log_folder_is_owner_only_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let env = env([MockTurn::text("unused")]).await;
    let log = env.home.path().join("log");
    let tui = Tui::spawn_after(&env, "umask 000", &[]);
    tui.wait_for("Ask anything");
    assert_eq!(mode(&log), 0o700, "log/ under umask 000");
    assert_eq!(mode(&log.join("tui.log")), 0o600);
    quit(tui);
    // A folder and log left open (by an older version) are tightened on the next start.
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(log.join("tui.log"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    assert_eq!(mode(&log), 0o700, "an open log/ is tightened");
    assert_eq!(mode(&log.join("tui.log")), 0o600);
    quit(tui);
}

fn history_lines(env: &TestEnv) -> Vec<serde_json::Value> {
    read(&env.home.path().join("history.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tui_and_the_line_mode_share_one_prompt_history_without_commands() {
    let env = env([
        MockTurn::text("tui answer"),
        MockTurn::text("line answer"),
        MockTurn::text("the summary"),
    ])
    .await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "asked in the tui", "tui answer");
    command(&tui, "/status");
    tui.wait_for("tokens    ");
    quit(tui);
    // The line mode, in the same home.
    let mut line = Tui::spawn(&env, &["--no-tui"]);
    line.wait_for("Type a request");
    line.send("asked in the line mode\r");
    line.wait_for("line answer");
    line.send("/compact\r");
    line.wait_for("conversation compacted");
    line.send("/exit\r");
    assert_eq!(line.wait_exit(), 0);
    // One shape (Codex's), prompts only.
    let lines = history_lines(&env);
    let texts: Vec<&str> = lines.iter().filter_map(|l| l["text"].as_str()).collect();
    assert_eq!(
        texts,
        ["asked in the tui", "asked in the line mode"],
        "{lines:?}"
    );
    for l in &lines {
        assert!(
            l["session_id"].as_str().is_some_and(|s| !s.is_empty()),
            "{l}"
        );
        assert!(l["ts"].as_u64().is_some(), "{l}");
    }
    // The TUI reads both back: Up recalls the line mode's prompt, then its own.
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    tui.send("\x1b[A");
    tui.wait_until("the line mode's prompt recalled", |_| {
        tui.rows()
            .iter()
            .any(|r| r.trim_end() == "› asked in the line mode")
    });
    tui.send("\x1b[A");
    tui.wait_until("the tui's prompt recalled", |_| {
        tui.rows()
            .iter()
            .any(|r| r.trim_end() == "› asked in the tui")
    });
    tui.send("\x15");
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn history_persistence_none_keeps_no_prompt_history() {
    let env = env([
        MockTurn::text("first answer"),
        MockTurn::text("second answer"),
    ])
    .await;
    let config = env.home.path().join("config.toml");
    let mut text = read(&config);
    text.push_str("\n[history]\npersistence = \"none\"\n");
    std::fs::write(&config, text).unwrap();
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    turn(&tui, "a private prompt", "first answer");
    quit(tui);
    let mut line = Tui::spawn(&env, &["--no-tui"]);
    line.wait_for("Type a request");
    line.send("another private prompt\r");
    line.wait_for("second answer");
    line.send("/exit\r");
    assert_eq!(line.wait_exit(), 0);
    let path = env.home.path().join("history.jsonl");
    assert!(!path.exists(), "history.jsonl written: {}", read(&path));
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_t_shows_long_command_output_whole_and_searches_it() {
    let env = env([
        MockTurn::tool_call(
            "shell",
            serde_json::json!({"command": ["seq", "1", "50000"]}),
        ),
        MockTurn::text("counted"),
    ])
    .await;
    let tui = Tui::spawn(&env, &["-s", "danger-full-access", "-a", "never"]);
    tui.wait_for("Ask anything");
    turn(&tui, "count", "counted");
    tui.wait_for("more lines (Ctrl+T shows the transcript)");
    tui.send("\x14"); // Ctrl+T
    let row_is = |tui: &Tui, text: &str| tui.rows().iter().any(|r| r.trim() == text);
    tui.wait_until("the transcript", |_| {
        tui.rows().iter().any(|r| r.starts_with("── Transcript"))
    });
    tui.send("/31337");
    tui.wait_until("the query typed", |_| row_is(&tui, "/31337"));
    tui.send("\r");
    tui.wait_until("the match, highlighted", |_| {
        tui.highlighted_rows().iter().any(|r| r.trim() == "31337")
    });
    tui.wait_until("the match count", |_| {
        tui.rows().iter().any(|r| r.contains("`31337` 1/1"))
    });
    // A new search starts from the page on screen (31337 on top), as in a pager; `n` goes
    // on to the next match: `/4999` finds 34999, then 44999.
    tui.send("/4999\r");
    tui.wait_until("the first match", |_| {
        tui.highlighted_rows().iter().any(|r| r.trim() == "34999")
    });
    tui.send("n");
    tui.wait_until("the next match", |_| {
        tui.highlighted_rows().iter().any(|r| r.trim() == "44999")
    });
    tui.send("\x1b");
    tui.wait_for("Ask anything");
    quit(tui);
}

/// A new pseudo-terminal of `ROWS` x `COLS`: (master, slave), both close-on-exec
/// (openpty(3) cannot do that atomically: a master inherited by a process another test
/// starts meanwhile would keep the terminal from hanging up).
fn open_pty() -> (std::fs::File, std::os::fd::OwnedFd) {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::fs::OpenOptionsExt;
    // SAFETY: posix_openpt(3) takes flags and returns a new descriptor or -1.
    let fd = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    assert!(fd >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let master = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: grantpt/unlockpt take the master's descriptor; ptsname_r writes at most
    // `name.len()` bytes into `name`.
    unsafe {
        assert_eq!(libc::grantpt(master.as_raw_fd()), 0);
        assert_eq!(libc::unlockpt(master.as_raw_fd()), 0);
        assert_eq!(
            libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len()),
            0
        );
    }
    // SAFETY: ptsname_r wrote a NUL-terminated path into `name`.
    let path = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
        .to_str()
        .unwrap()
        .to_string();
    let slave: OwnedFd = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(&path)
        .unwrap()
        .into();
    let size = libc::winsize {
        ws_row: ROWS,
        ws_col: COLS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads one winsize through the pointer.
    let rc = unsafe { libc::ioctl(slave.as_raw_fd(), libc::TIOCSWINSZ, &size) };
    assert_eq!(rc, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
    (master, slave)
}

// A terminal that hangs up (its window closed, the program holding its pseudo-terminal
// killed) ends the TUI even when no SIGHUP comes. It used to keep running, spinning on the
// dead terminal at a third of a core. The keyboard side is its own pseudo-terminal here, so
// only the input can notice: frames still draw fine on the screen's.
#[tokio::test(flavor = "multi_thread")]
async fn the_tui_ends_when_its_terminal_hangs_up() {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};

    let env = env([MockTurn::text("unused")]).await;
    let (keyboard, keyboard_slave) = open_pty();
    let (mut display, display_slave) = open_pty();
    let mut command = std::process::Command::new(Tui::interpreter_command());
    // In a session of its own without a controlling terminal, like a program whose
    // terminal is not its session's: reads of the hung-up terminal then return end of file
    // rather than an error, which is what the TUI used to spin on.
    // SAFETY: setsid(2) is async-signal-safe and touches no memory of the parent.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = command
        .current_dir(env.work.path())
        .env("OPENINTERPRETER_HOME", env.home.path())
        .env("TERM", "xterm-256color")
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::from(keyboard_slave))
        .stdout(std::process::Stdio::from(
            display_slave.try_clone().unwrap(),
        ))
        .stderr(std::process::Stdio::from(display_slave))
        .spawn()
        .unwrap();
    // The command holds the terminals' slave sides it was given; the child has its own.
    drop(command);

    // The screen, read until the interpreter is gone; cursor questions answered on the
    // keyboard's side, as a terminal answers them.
    let (drawn_tx, drawn) = std::sync::mpsc::channel::<()>();
    // The copy answering is let go once the composer is drawn: it would keep the
    // keyboard's terminal from hanging up.
    let mut answers = Some(keyboard.try_clone().unwrap());
    let reader = std::thread::spawn(move || {
        let mut screen = vt100::Parser::new(ROWS, COLS, 0);
        let mut buf = [0u8; 8192];
        while let Ok(n @ 1..) = display.read(&mut buf) {
            screen.process(&buf[..n]);
            if let Some(answers) = answers.as_mut()
                && buf[..n].windows(4).any(|w| w == b"\x1b[6n")
            {
                let (row, col) = screen.screen().cursor_position();
                let _ = write!(answers, "\x1b[{};{}R", row + 1, col + 1);
            }
            if answers.is_some() && screen_text(&mut screen).contains("Ask anything") {
                answers = None;
                let _ = drawn_tx.send(());
            }
        }
    });
    drawn
        .recv_timeout(DEADLINE)
        .expect("the composer was never drawn");
    assert!(
        child.try_wait().unwrap().is_none(),
        "the TUI ended on its own"
    );

    // Hang up the keyboard: no copy of its master is left open.
    drop(keyboard);
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("the TUI kept running after its terminal hung up");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Ended by itself, not by a signal.
    assert!(status.code().is_some(), "{status:?}");
    let _ = reader.join();
}
