//! Rendering is pure over the app state: events in, a `TestBackend` screen out, compared
//! with committed `insta` snapshots (`cargo test` fails on a mismatch; review changes with
//! `cargo insta review` or by reading the `.snap.new` files).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use oi_protocol::protocol::EventMsg;
use oi_tui::app::{App, AppAction};
use oi_tui::cells::HistoryCell;
use oi_tui::composer::Composer;
use oi_tui::render::{cells_to_lines, render_live};
use oi_tui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::widgets::{Paragraph, Widget};
use serde_json::json;
use std::time::{Duration, Instant};

const PLAIN: Theme = Theme::mono();

fn ev(v: serde_json::Value) -> EventMsg {
    serde_json::from_value(v).expect("event json")
}

fn session() -> EventMsg {
    ev(json!({
        "type": "session_configured",
        "session_id": "0199a213-81c0-7800-8aa1-bbab2a035a53",
        "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53",
        "model": "qwen3-coder",
        "model_provider_id": "ollama",
        "approval_policy": "on-request",
        "approvals_reviewer": "user",
        "sandbox_policy": {"type": "workspace-write"},
        "cwd": "/repo/project",
        "history_log_id": 0,
        "history_entry_count": 0
    }))
}

fn app() -> App {
    let mut app = App::new(Composer::default());
    app.on_event(&session());
    app
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn type_str(app: &mut App, s: &str) -> Vec<AppAction> {
    let mut out = Vec::new();
    for c in s.chars() {
        out.extend(app.on_key(key(KeyCode::Char(c))));
    }
    out
}

/// The live area at `width`×`height`, with the clock fixed 3 s into the turn.
fn live(app: &App, width: u16, height: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
    let now = app
        .status
        .turn_started
        .map(|t| t + Duration::from_secs(3))
        .unwrap_or_else(Instant::now);
    term.draw(|f| {
        render_live(app, f.area(), f.buffer_mut(), &PLAIN, now);
    })
    .unwrap();
    format!("{}", term.backend())
}

/// What the cells add to the scrollback at `width`.
fn scrollback(cells: &[HistoryCell], width: u16) -> String {
    let lines = cells_to_lines(cells, width, &PLAIN);
    let mut term = Terminal::new(TestBackend::new(width, lines.len() as u16)).unwrap();
    term.draw(|f| Paragraph::new(lines).render(f.area(), f.buffer_mut()))
        .unwrap();
    format!("{}", term.backend())
}

#[test]
fn idle_composer_and_status_line() {
    let mut app = app();
    app.on_event(&ev(
        json!({"type": "mcp_startup_update", "server": "docs", "status": {"state": "ready"}}),
    ));
    app.on_event(&ev(
        json!({"type": "mcp_startup_update", "server": "web", "status": {"state": "starting"}}),
    ));
    app.on_event(&ev(json!({"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": 30000, "cached_input_tokens": 0, "output_tokens": 2000, "reasoning_output_tokens": 0, "total_tokens": 32000},
        "last_token_usage": {"input_tokens": 30000, "cached_input_tokens": 0, "output_tokens": 2768, "reasoning_output_tokens": 0, "total_tokens": 32768},
        "model_context_window": 131072}, "rate_limits": null})));
    insta::assert_snapshot!(live(&app, 80, 6));
}

#[test]
fn a_turn_streams_then_lands_in_the_scrollback() {
    let mut app = app();
    let header = app.take_pending();
    insta::assert_snapshot!("header", scrollback(&header, 80));
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"})));
    app.on_event(&ev(
        json!({"type": "user_message", "message": "explain main.rs"}),
    ));
    for d in ["Here is ", "the **plan**:\n\n", "1. read\n2. write\n"] {
        app.on_event(&ev(json!({"type": "agent_message_delta", "delta": d})));
    }
    // The finished paragraph is in the scrollback already; the open list stays live.
    insta::assert_snapshot!("streaming", live(&app, 60, 12));
    let committed = app.take_pending();
    assert!(
        matches!(committed.last(), Some(HistoryCell::Assistant { markdown }) if markdown == "Here is the **plan**:\n\n"),
        "{committed:?}"
    );
    app.on_event(&ev(json!({"type": "agent_message", "message": "Here is the **plan**:\n\n1. read\n2. write\n\n```rust\nfn main() {}\n```"})));
    app.on_event(&ev(json!({"type": "task_complete", "turn_id": "t1", "last_agent_message": null, "duration_ms": 4200})));
    assert!(!app.is_running());
    insta::assert_snapshot!("finished", scrollback(&app.take_pending(), 60));
}

#[test]
fn streamed_reasoning_is_shown_once_whenever_its_final_event_comes() {
    let reasoning_cells = |cells: &[HistoryCell]| {
        cells
            .iter()
            .filter(|c| matches!(c, HistoryCell::Reasoning { .. }))
            .count()
    };
    let mut app = app();
    app.take_pending();
    // Chat servers finish the reasoning item after the answer.
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"})));
    app.on_event(&ev(
        json!({"type": "agent_reasoning_delta", "delta": "thinking "}),
    ));
    app.on_event(&ev(
        json!({"type": "agent_reasoning_delta", "delta": "about it"}),
    ));
    app.on_event(&ev(
        json!({"type": "agent_message_delta", "delta": "The answer."}),
    ));
    app.on_event(&ev(
        json!({"type": "agent_message", "message": "The answer."}),
    ));
    app.on_event(&ev(
        json!({"type": "agent_reasoning", "text": "thinking about it"}),
    ));
    app.on_event(&ev(json!({"type": "task_complete", "turn_id": "t1", "last_agent_message": null, "duration_ms": 10})));
    let cells = app.take_pending();
    assert_eq!(reasoning_cells(&cells), 1, "{cells:?}");
    // Finished before the answer starts: the full text replaces the deltas.
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t2", "model_context_window": null, "collaboration_mode_kind": "default"})));
    app.on_event(&ev(
        json!({"type": "agent_reasoning_delta", "delta": "partial"}),
    ));
    app.on_event(&ev(
        json!({"type": "agent_reasoning", "text": "partial and whole"}),
    ));
    app.on_event(&ev(json!({"type": "agent_message", "message": "Second."})));
    // No deltas at all: the final event is what shows.
    app.on_event(&ev(
        json!({"type": "agent_reasoning", "text": "only final"}),
    ));
    app.on_event(&ev(json!({"type": "task_complete", "turn_id": "t2", "last_agent_message": null, "duration_ms": 10})));
    let cells = app.take_pending();
    let texts: Vec<&str> = cells
        .iter()
        .filter_map(|c| match c {
            HistoryCell::Reasoning { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["partial and whole", "only final"], "{cells:?}");
}

#[test]
fn command_cells_show_live_tail_then_exit_and_duration() {
    let mut app = app();
    app.take_pending();
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"})));
    app.on_event(&ev(
        json!({"type": "exec_command_begin", "call_id": "c1", "turn_id": "t1",
        "command": ["cargo", "test"], "cwd": "/repo/project", "parsed_cmd": []}),
    ));
    use base64::Engine;
    let chunk = base64::engine::general_purpose::STANDARD
        .encode("line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n");
    app.on_event(&ev(json!({"type": "exec_command_output_delta", "call_id": "c1", "stream": "stdout", "chunk": chunk})));
    insta::assert_snapshot!("running", live(&app, 60, 10));
    let output: String = (1..=9).map(|i| format!("line {i}\n")).collect();
    app.on_event(&ev(
        json!({"type": "exec_command_end", "call_id": "c1", "turn_id": "t1",
        "command": ["cargo", "test"], "cwd": "/repo/project", "parsed_cmd": [],
        "stdout": output, "stderr": "", "aggregated_output": output, "exit_code": 101,
        "duration": {"secs": 2, "nanos": 500000000}, "formatted_output": "", "status": "failed"}),
    ));
    insta::assert_snapshot!("done", scrollback(&app.take_pending(), 60));
}

#[test]
fn a_command_stopped_by_an_interrupt_says_so() {
    let mut app = app();
    app.take_pending();
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"})));
    for (id, cmd) in [("c1", "sleep 30"), ("c2", "sleep 40")] {
        app.on_event(&ev(
            json!({"type": "exec_command_begin", "call_id": id, "turn_id": "t1",
            "command": ["sh", "-c", cmd], "cwd": "/repo", "parsed_cmd": []}),
        ));
    }
    let actions = app.on_key(key(KeyCode::Esc));
    assert!(matches!(
        actions.as_slice(),
        [AppAction::Op(oi_protocol::protocol::Op::Interrupt)]
    ));
    // One command reports its kill, the other is still listed when the turn ends.
    app.on_event(&ev(
        json!({"type": "exec_command_end", "call_id": "c1", "turn_id": "t1",
        "command": ["sh", "-c", "sleep 30"], "cwd": "/repo", "parsed_cmd": [],
        "stdout": "", "stderr": "", "aggregated_output": "", "exit_code": 137,
        "duration": {"secs": 1, "nanos": 0}, "formatted_output": "", "status": "failed"}),
    ));
    app.on_event(&ev(json!({"type": "turn_aborted", "turn_id": "t1", "reason": "interrupted", "duration_ms": 1200})));
    let text = scrollback(&app.take_pending(), 60);
    assert!(text.contains("Interrupted $ sh -c 'sleep 30'"), "{text}");
    assert!(text.contains("Interrupted $ sh -c 'sleep 40'"), "{text}");
    assert!(
        !text.contains("exit 137") && !text.contains("Declined"),
        "{text}"
    );
    // The next turn's failures are failures again.
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t2", "model_context_window": null, "collaboration_mode_kind": "default"})));
    app.on_event(&ev(
        json!({"type": "exec_command_end", "call_id": "c3", "turn_id": "t2",
        "command": ["false"], "cwd": "/repo", "parsed_cmd": [],
        "stdout": "", "stderr": "", "aggregated_output": "", "exit_code": 1,
        "duration": {"secs": 0, "nanos": 0}, "formatted_output": "", "status": "failed"}),
    ));
    let text = scrollback(&app.take_pending(), 60);
    assert!(text.contains("Ran $ false exit 1"), "{text}");
}

#[test]
fn patches_mcp_calls_errors_and_markers() {
    let mut app = app();
    app.take_pending();
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"})));
    app.on_event(&ev(json!({"type": "patch_apply_end", "call_id": "p1", "turn_id": "t1", "stdout": "", "stderr": "",
        "success": true, "status": "completed", "changes": {
            "src/lib.rs": {"type": "update", "unified_diff": "@@ -1,2 +1,2 @@\n-old line\n+new line\n context\n", "move_path": null},
            "notes.md": {"type": "add", "content": "# Notes\nhello\n"}
        }})));
    app.on_event(&ev(json!({"type": "mcp_tool_call_end", "call_id": "m1",
        "invocation": {"server": "docs", "tool": "search", "arguments": {"q": "tokio"}},
        "duration": {"secs": 0, "nanos": 420000000},
        "result": {"Ok": {"content": [{"type": "text", "text": "3 results\nmore"}]}}})));
    app.on_event(&ev(
        json!({"type": "warning", "message": "model does not report usage"}),
    ));
    app.on_event(&ev(
        json!({"type": "error", "message": "stream disconnected"}),
    ));
    app.on_event(&ev(json!({"type": "turn_aborted", "turn_id": "t1", "reason": "interrupted", "duration_ms": 61000})));
    insta::assert_snapshot!(scrollback(&app.take_pending(), 70));
}

#[test]
fn exec_approval_overlay_answers_with_one_key() {
    let mut app = app();
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"})));
    app.on_event(&ev(json!({"type": "exec_approval_request", "call_id": "c9", "turn_id": "t1",
        "command": ["rm", "-rf", "build"], "cwd": "/repo/project", "reason": "clean the build directory", "parsed_cmd": []})));
    insta::assert_snapshot!(live(&app, 80, 10));
    let actions = app.on_key(key(KeyCode::Char('a')));
    match actions.as_slice() {
        [AppAction::Op(oi_protocol::protocol::Op::ExecApproval { id, decision })] => {
            assert_eq!(id, "c9");
            assert_eq!(
                *decision,
                oi_protocol::protocol::ReviewDecision::ApprovedForSession
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(app.overlay.is_none());
}

#[test]
fn esc_on_an_approval_denies_and_stops_the_turn() {
    let mut app = app();
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"})));
    app.on_event(&ev(
        json!({"type": "apply_patch_approval_request", "call_id": "p2", "turn_id": "t1",
        "changes": {"a.txt": {"type": "add", "content": "hi\n"}}}),
    ));
    insta::assert_snapshot!(live(&app, 60, 10));
    let actions = app.on_key(key(KeyCode::Esc));
    assert!(matches!(
        actions.as_slice(),
        [AppAction::Op(oi_protocol::protocol::Op::PatchApproval {
            decision: oi_protocol::protocol::ReviewDecision::Abort,
            ..
        })]
    ));
}

#[test]
fn a_tall_approval_on_a_short_screen_keeps_its_title_and_keys() {
    let mut app = app();
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"})));
    let content: String = (0..60).map(|i| format!("line {i}\n")).collect();
    app.on_event(&ev(
        json!({"type": "apply_patch_approval_request", "call_id": "p3", "turn_id": "t1",
        "changes": {"big.txt": {"type": "add", "content": content}},
        "reason": "This patch writes outside the writable roots of the sandbox."}),
    ));
    let screen = live(&app, 60, 12);
    let rows: Vec<&str> = screen.lines().collect();
    assert_eq!(rows.len(), 12, "{screen}");
    assert!(rows[0].contains("Apply this patch?"), "{screen}");
    assert!(screen.contains("added big.txt"), "{screen}");
    assert!(screen.contains("more rows"), "{screen}");
    assert!(screen.contains("writable roots"), "{screen}");
    assert!(
        rows[10].contains("y yes") && rows[10].contains("Esc stop"),
        "{screen}"
    );
    assert!(rows[11].contains("Working"), "{screen}");
}

#[test]
fn slash_popup_filters_and_tab_completes() {
    let mut app = app();
    type_str(&mut app, "/m");
    insta::assert_snapshot!(live(&app, 60, 8));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.composer.text(), "/mention ");
    app.composer.clear();
    type_str(&mut app, "/nope");
    let actions = app.on_key(key(KeyCode::Enter));
    assert!(actions.is_empty(), "unknown commands never reach the model");
    let cells = app.take_pending();
    assert!(
        matches!(cells.last(), Some(HistoryCell::Error { message }) if message.contains("/nope"))
    );
}

#[test]
fn the_slash_popup_scrolls_so_the_selection_is_always_visible() {
    let mut app = app();
    type_str(&mut app, "/");
    let all = oi_tui::slash::COMMANDS.len();
    assert!(
        all > 8,
        "the popup shows 8 rows; the test needs more commands"
    );
    for i in 0..all + 2 {
        let selected = match &app.popup {
            Some(oi_tui::app::Popup::Commands { selected }) => *selected,
            other => panic!("no command popup: {other:?}"),
        };
        assert_eq!(selected, i.min(all - 1));
        let (name, _, _) = oi_tui::slash::COMMANDS[selected];
        let screen = live(&app, 60, 14);
        assert!(
            screen.contains(&format!("/{name:<10}")),
            "after {i} × Down the selected /{name} is not on screen:\n{screen}"
        );
        app.on_key(key(KeyCode::Down));
    }
    // Enter runs the (visible) last command, /help.
    app.on_key(key(KeyCode::Enter));
    let shown = scrollback(&app.take_pending(), 70);
    assert!(shown.contains("list commands and keys"), "{shown}");
    // Typing filters, and the window starts at the top again.
    type_str(&mut app, "/ex");
    let screen = live(&app, 60, 14);
    assert!(screen.contains("/exit"), "{screen}");
    assert!(!screen.contains("/model"), "{screen}");
}

#[test]
fn elicitation_form_renders_the_schema() {
    let mut app = app();
    app.on_event(&ev(
        json!({"type": "elicitation_request", "server_name": "deploy", "id": 7, "request": {
        "message": "Which environment?",
        "requestedSchema": {"type": "object", "required": ["env"], "properties": {
            "env": {"type": "string", "enum": ["staging", "production"], "title": "Environment"},
            "dry_run": {"type": "boolean", "title": "Dry run"}}}}}),
    ));
    insta::assert_snapshot!(live(&app, 60, 9));
    // Fields come in the server's order: `env` (focused first), then `dry_run`.
    app.on_key(key(KeyCode::Right));
    let actions = app.on_key(key(KeyCode::Enter));
    match actions.as_slice() {
        [AppAction::Op(oi_protocol::protocol::Op::ResolveElicitation { response, .. })] => {
            assert_eq!(
                response.content,
                Some(json!({"env": "production", "dry_run": false}))
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_long_form_on_a_short_screen_keeps_the_focused_field_in_view() {
    let mut app = app();
    let props: serde_json::Map<String, serde_json::Value> = (1..=12)
        .map(|i| {
            (
                format!("f{i:02}"),
                json!({"type": "string", "title": format!("Field {i}")}),
            )
        })
        .collect();
    app.on_event(&ev(
        json!({"type": "elicitation_request", "server_name": "deploy", "id": 8, "request": {
        "message": "Fill these in", "requestedSchema": {"type": "object", "properties": props}}}),
    ));
    let screen = live(&app, 60, 9);
    assert!(screen.contains("deploy asks"), "{screen}");
    assert!(screen.contains("› Field 1:"), "{screen}");
    assert!(screen.contains("Enter submit"), "{screen}");
    for _ in 0..11 {
        app.on_key(key(KeyCode::Tab));
    }
    let screen = live(&app, 60, 9);
    assert!(screen.contains("deploy asks"), "{screen}");
    assert!(screen.contains("› Field 12:"), "{screen}");
    assert!(!screen.contains("Field 1:"), "{screen}");
    assert!(screen.contains("Enter submit"), "{screen}");
}

#[test]
fn narrow_terminal_keeps_everything_inside_60_columns() {
    let mut app = app();
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"})));
    type_str(
        &mut app,
        "a fairly long request that has to wrap inside the composer at sixty columns",
    );
    insta::assert_snapshot!(live(&app, 60, 8));
}

#[test]
fn transcript_overlay_shows_the_whole_thread() {
    let mut app = app();
    app.on_event(&ev(
        json!({"type": "user_message", "message": "first question"}),
    ));
    app.on_event(&ev(
        json!({"type": "agent_message", "message": "first answer"}),
    ));
    app.on_key(KeyEvent::new(KeyCode::Char('t'), KeyModifiers::CONTROL));
    insta::assert_snapshot!(live(&app, 60, 14));
    app.on_key(key(KeyCode::Esc));
    assert!(app.overlay.is_none());
}

#[test]
fn the_transcript_shows_long_command_output_whole_and_searches_it() {
    let mut app = app();
    let output: String = (1..=50_000).map(|i| format!("{i}\n")).collect();
    app.push_cell(HistoryCell::Exec {
        command: "seq 1 50000".into(),
        output,
        outcome: oi_tui::cells::Outcome::Done {
            exit_code: 0,
            duration_ms: 12,
        },
    });
    let cell = scrollback(&app.take_pending(), 60);
    assert!(cell.contains("49994 more lines"), "{cell}");
    app.screen = (60, 14);
    app.on_key(KeyEvent::new(KeyCode::Char('t'), KeyModifiers::CONTROL));
    let screen = live(&app, 60, 14);
    assert!(
        screen.contains("  50000 "),
        "the end of the output shows:\n{screen}"
    );
    assert!(!screen.contains("more lines"), "{screen}");
    type_str(&mut app, "/31337");
    assert!(live(&app, 60, 14).contains("/31337"));
    app.on_key(key(KeyCode::Enter));
    let screen = live(&app, 60, 14);
    assert!(screen.contains("    31337 "), "the match shows:\n{screen}");
    assert!(screen.contains("`31337` 1/1"), "{screen}");
    // A new search starts from the page on screen, like a pager's.
    type_str(&mut app, "/2500");
    app.on_key(key(KeyCode::Enter));
    assert!(live(&app, 60, 14).contains("    32500 "));
    type_str(&mut app, "n");
    let screen = live(&app, 60, 14);
    assert!(
        screen.contains("    42500 "),
        "n goes to the next match:\n{screen}"
    );
    type_str(&mut app, "N");
    assert!(live(&app, 60, 14).contains("    32500 "), "N goes back");
    app.on_key(key(KeyCode::Esc));
    assert!(app.overlay.is_none());
}

#[test]
fn ctrl_c_interrupts_then_twice_on_empty_composer_quits() {
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let mut app = app();
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"})));
    assert!(matches!(
        app.on_key(ctrl_c).as_slice(),
        [AppAction::Op(oi_protocol::protocol::Op::Interrupt)]
    ));
    assert!(
        app.hint
            .as_deref()
            .is_some_and(|h| h.starts_with("interrupting"))
    );
    app.on_event(&ev(
        json!({"type": "turn_aborted", "turn_id": "t1", "reason": "interrupted"}),
    ));
    assert_eq!(app.hint, None, "the interrupting hint ends with the turn");
    type_str(&mut app, "draft");
    assert!(app.on_key(ctrl_c).is_empty());
    assert!(app.composer.is_empty(), "first Ctrl+C clears the composer");
    assert!(app.on_key(ctrl_c).is_empty());
    assert!(matches!(app.on_key(ctrl_c).as_slice(), [AppAction::Quit]));
}

#[test]
fn status_and_approvals_presets_apply_to_the_next_turn() {
    let mut app = app();
    app.take_pending();
    type_str(&mut app, "/approvals");
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    type_str(&mut app, "/status");
    app.on_key(key(KeyCode::Enter));
    let status = scrollback(&app.take_pending(), 70);
    assert!(
        status.contains("sandbox   danger-full-access · approval never"),
        "{status}"
    );
    type_str(&mut app, "hi");
    match app.on_key(key(KeyCode::Enter)).as_slice() {
        [AppAction::Op(oi_protocol::protocol::Op::UserInput { overrides, .. })] => {
            assert_eq!(
                overrides.approval_policy,
                Some(oi_protocol::config_types::AskForApproval::Never)
            );
            assert!(overrides.sandbox_policy.is_some());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_harness_picker_switches_the_profile_from_the_next_turn_and_plans_are_shown() {
    let mut app = app();
    app.take_pending();
    type_str(&mut app, "/harness");
    app.on_key(key(KeyCode::Enter));
    // The picker lists the profiles in `Harness::ALL`'s order.
    let qwen = oi_protocol::config_types::Harness::ALL
        .iter()
        .position(|h| *h == oi_protocol::config_types::Harness::QwenCode)
        .unwrap();
    for _ in 0..qwen {
        app.on_key(key(KeyCode::Down));
    }
    app.on_key(key(KeyCode::Enter));
    let said = scrollback(&app.take_pending(), 90);
    assert!(said.contains("Harness: qwen-code"), "{said}");
    type_str(&mut app, "hi");
    match app.on_key(key(KeyCode::Enter)).as_slice() {
        [AppAction::Op(oi_protocol::protocol::Op::UserInput { overrides, .. })] => {
            assert_eq!(
                overrides.harness,
                Some(oi_protocol::config_types::Harness::QwenCode)
            );
        }
        other => panic!("{other:?}"),
    }
    app.take_pending();
    app.on_event(&ev(json!({"type": "plan_update", "plan": [
        {"step": "read the test", "status": "completed"},
        {"step": "fix calc.py", "status": "in_progress"}]})));
    let plan = scrollback(&app.take_pending(), 90);
    assert!(
        plan.contains("✔ read the test") && plan.contains("▶ fix calc.py"),
        "{plan}"
    );
}

#[test]
fn status_says_where_the_context_window_came_from() {
    let mut app = app();
    app.take_pending();
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t1", "model_context_window": 2048,
        "model_context_window_source": "llama.cpp /props n_ctx", "collaboration_mode_kind": "default"})));
    app.on_event(&ev(json!({"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": 1024, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0, "total_tokens": 1024},
        "last_token_usage": {"input_tokens": 1024, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0, "total_tokens": 1024},
        "model_context_window": 2048, "model_context_window_source": "llama.cpp /props n_ctx"}, "rate_limits": null})));
    type_str(&mut app, "/status");
    app.on_key(key(KeyCode::Enter));
    let status = scrollback(&app.take_pending(), 90);
    assert!(
        status.contains("context   50% left of 2048 (llama.cpp /props n_ctx)"),
        "{status}"
    );
}

#[test]
fn mcp_tool_approval_names_the_server_tool_and_arguments() {
    let mut app = app();
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"})));
    app.on_event(&ev(json!({"type": "exec_approval_request", "call_id": "c3", "turn_id": "t1",
        "command": ["mcp__docs__search", "{\"query\":\"tokio select\",\"limit\":5}"], "cwd": "/repo/project",
        "reason": "Call the MCP tool `search` of server `docs`?", "parsed_cmd": []})));
    let screen = live(&app, 80, 12);
    insta::assert_snapshot!(screen);
    let actions = app.on_key(key(KeyCode::Char('y')));
    assert!(
        matches!(actions.as_slice(), [AppAction::Op(oi_protocol::protocol::Op::ExecApproval { id, .. })] if id == "c3"),
        "{actions:?}"
    );
}
