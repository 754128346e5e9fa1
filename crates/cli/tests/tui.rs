//! The terminal UI end to end: the real `interpreter` binary in a pseudo-terminal, driven
//! by keystrokes, against the scripted mock model; the screen is read back with `vt100`.
//! Every wait polls the screen until the text appears (generous deadlines, no fixed sleeps).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;
use crate::tui_pty;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;
use tui_pty::*;

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
    let id = resume_hint_id(&screen);
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
    // The answer shows before its turn ends; Ctrl+C before that would interrupt the turn.
    tui.wait_until("the turn to end", |t| !t.contains("Esc to interrupt"));
    tui.send("\x03"); // Ctrl+C twice on an empty composer quits
    tui.wait_for("Ctrl+C again to quit");
    tui.send("\x03");
    assert_eq!(tui.wait_exit(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_mcp_lists_the_servers_and_unknown_commands_stay_local() {
    let env = env_with_mcp(MockScript::turns([MockTurn::text("unused")])).await;
    // One of server-everything's tools filtered out, and a server that never answers.
    let path = env.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str(
        "disabled_tools = [\"echo\"]\n\n[mcp_servers.silent]\ncommand = \"sleep\"\nargs = [\"100\"]\nstartup_timeout_sec = 1\n",
    );
    std::fs::write(&path, config).unwrap();
    let mut tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    tui.wait_for("MCP server `silent` failed to start");
    tui.wait_for("MCP 1/2");
    tui.type_text("/mc");
    // The popup filters as you type; Tab completes.
    tui.wait_for("list MCP servers");
    tui.send("\t");
    tui.wait_until("Tab to complete `/mcp`", |t| {
        t.lines().any(|l| l.trim_end() == "› /mcp")
    });
    tui.send("\r");
    tui.wait_for("MCP servers");
    let screen = tui.wait_for("everything · ready · stdio");
    let words = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    // `echo` by `disabled_tools`, and the task-only `simulate-research-query`.
    assert!(words.contains("12 tools (2 withheld)"), "{screen}");
    // The warning that the server failed and `/mcp`'s last error keep the error's lines:
    // the config to add is on lines of its own in both.
    let own_line = |text: &str| screen.lines().filter(|l| l.trim() == text).count();
    assert_eq!(own_line("[mcp_servers.silent]"), 2, "{screen}");
    assert_eq!(own_line("startup_timeout_sec = 10"), 2, "{screen}");
    // A failed server's error keeps its lines: the last ones say how to fix it.
    assert!(
        screen.contains("  last error: MCP client for `silent` timed out"),
        "{screen}"
    );
    // `/mcp verbose` adds every tool with its approval mode, the withheld ones with the
    // reason, and the server's resources and prompts (server-everything has both).
    tui.type_text("/mcp verbose");
    tui.send("\r");
    let screen = tui.wait_for("  prompts: ");
    assert!(screen.contains("  resources: "), "{screen}");
    assert!(
        screen.contains("  echo [withheld] disabled by enabled_tools/disabled_tools"),
        "{screen}"
    );
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

#[tokio::test(flavor = "multi_thread")]
async fn an_elicitation_form_checks_required_fields_and_answers_the_server() {
    let env = env_with_mcp(MockScript::turns([
        MockTurn::tool_call("mcp__everything__trigger_elicitation_request", json!({})),
        MockTurn::text("thanks for the details"),
    ]))
    .await;
    // Call the tool without asking, so the form is the only question.
    let path = env.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str(
        "\n[mcp_servers.everything.tools.trigger-elicitation-request]\napproval_mode = \"approve\"\n",
    );
    std::fs::write(&path, config).unwrap();
    let mut tui = Tui::spawn(&env, &[]);
    tui.wait_for("MCP 1/1");
    tui.type_text("ask me");
    tui.send("\r");
    tui.wait_for("everything asks");
    // Required fields are checked before the answer goes out.
    tui.send("\r");
    tui.wait_for("`String` is required");
    // Move the focus (Tab) to the required `name` field, titled "String".
    let focused = |tui: &Tui| {
        tui.rows()
            .into_iter()
            .find(|r| r.starts_with("› ") && r.contains(':'))
            .unwrap_or_default()
    };
    for _ in 0..20 {
        let now = focused(&tui);
        if now.starts_with("› String*:") {
            break;
        }
        tui.send("\t");
        tui.wait_until("the focus to move", |_| focused(&tui) != now);
    }
    tui.type_text("Ada");
    tui.send("\r");
    tui.wait_for("thanks for the details");
    let reqs = env.mock.requests();
    let outputs = reqs[1].tool_outputs();
    assert!(
        outputs.iter().any(|(_, out)| out.contains("- Name: Ada")),
        "{outputs:?}"
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

/// Pids of running processes whose command line is exactly `argv`.
fn processes_running(argv: &[&str]) -> Vec<u32> {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want))
        .collect()
}

/// A termination signal during a running command: the turn is interrupted, its command
/// stopped, the thread stored, the terminal given back, and the exit code is 128 + N.
async fn signal_ends_the_session_cleanly(signal: libc::c_int, name: &str, code: u32) {
    // A duration no other process on the machine is likely to sleep for.
    let argv = ["sleep", "41.2503"];
    let env = TestEnv::new(
        MockScript::turns([MockTurn::tool_call("shell", json!({ "command": argv }))]),
        WireApi::Chat,
    )
    .await;
    let mut tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    tui.type_text("wait a while");
    tui.send("\r");
    tui.wait_for("sleep 41.2503");
    tui.wait_until("the command to start", |_| {
        !processes_running(&argv).is_empty()
    });
    assert!(tui.bracketed_paste(), "the TUI turns bracketed paste on");
    let pid = libc::pid_t::try_from(tui.pid().expect("interpreter running")).unwrap();
    // SAFETY: plain syscall on the interpreter this test started.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    assert_eq!(tui.wait_exit(), code);
    let screen = tui.wait_for(&format!("Stopped by {name}."));
    assert!(!tui.bracketed_paste(), "terminal not restored:\n{screen}");
    let id = resume_hint_id(&screen);
    assert!(
        stored_thread_ids(&env).contains(&id),
        "thread {id} not stored"
    );
    // The command did not outlive the agent.
    tui.wait_until("the command to be stopped", |_| {
        processes_running(&argv).is_empty()
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_ends_the_session_cleanly() {
    signal_ends_the_session_cleanly(libc::SIGTERM, "SIGTERM", 143).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sighup_ends_the_session_cleanly() {
    signal_ends_the_session_cleanly(libc::SIGHUP, "SIGHUP", 129).await;
}

// Ctrl+Z in a shell with job control: the TUI gives the terminal back and stops like any
// job; `fg` continues it with the draft intact, and it still answers keys and exits cleanly.
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_z_suspends_to_the_shell_and_fg_resumes() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("answered after fg")]),
        WireApi::Chat,
    )
    .await;
    let mut tui = Tui::spawn_shell(&env);
    tui.wait_for("shell$");
    tui.send(&format!("{}\r", Tui::interpreter_command()));
    tui.wait_for("Ask anything");
    tui.type_text("draft before");
    tui.send("\x1a");
    tui.wait_for("Stopped");
    tui.send("echo shell-ran-$((6*7))\r");
    tui.wait_for("shell-ran-42");
    tui.send("fg\r");
    tui.wait_for("› draft before");
    tui.type_text(" and after");
    tui.send("\r");
    tui.wait_for("answered after fg");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0].all_text().contains("draft before and after"));
    tui.wait_until("the turn to end", |t| !t.contains("Esc to interrupt"));
    tui.type_text("/quit");
    tui.send("\r");
    tui.wait_for("Resume this thread with");
    tui.send("exit $?\r");
    assert_eq!(tui.wait_exit(), 0);
}
