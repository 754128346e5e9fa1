//! Settings the TUI keeps for the whole session, across the threads it opens.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use oi_protocol::config_types::Harness;
use oi_protocol::config_types::{AskForApproval, SandboxMode};
use oi_tui::app::{App, with_choices};
use oi_tui::composer::Composer;
use serde_json::json;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn session(id: &str) -> oi_protocol::protocol::EventMsg {
    serde_json::from_value(json!({
        "type": "session_configured",
        "session_id": id,
        "thread_id": id,
        "model": "qwen3-coder",
        "model_provider_id": "ollama",
        "approval_policy": "never",
        "approvals_reviewer": "user",
        "sandbox_policy": {"type": "danger-full-access"},
        "cwd": "/repo/project",
        "history_log_id": 0,
        "history_entry_count": 0
    }))
    .expect("event json")
}

fn config() -> (tempfile::TempDir, oi_config::Config) {
    let home = tempfile::tempdir().unwrap();
    let loaded = oi_config::load_config(oi_config::ConfigLoadOptions {
        home: Some(home.path().to_path_buf()),
        ..Default::default()
    })
    .unwrap();
    (home, loaded.config)
}

#[test]
fn the_approvals_choice_outlives_the_thread_it_was_made_in() {
    let mut app = App::new(Composer::default());
    app.on_event(&session("0199a213-81c0-7800-8aa1-bbab2a035a53"));
    for c in "/approvals".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    app.on_key(key(KeyCode::Enter));
    // The third preset: "Ask for everything".
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    let choice = Some((SandboxMode::WorkspaceWrite, AskForApproval::Untrusted));
    assert_eq!(app.approvals_choice, choice);
    // A new thread (its session event) does not forget it.
    app.on_event(&session("0199a213-81c0-7800-8aa1-bbab2a035a54"));
    assert_eq!(app.approvals_choice, choice);
    // And the config the next thread starts with carries it.
    let (_home, base) = config();
    let next = with_choices(&base, app.approvals_choice, None);
    assert_eq!(next.approval_policy, AskForApproval::Untrusted);
    assert_eq!(next.sandbox_policy.mode(), SandboxMode::WorkspaceWrite);
    // No choice: the configured settings.
    let same = with_choices(&base, None, None);
    assert_eq!(same.approval_policy, base.approval_policy);
    assert_eq!(same.sandbox_policy, base.sandbox_policy);
    assert_eq!(same.harness, base.harness);
}

#[test]
fn the_harness_choice_outlives_the_thread_it_was_made_in() {
    let mut app = App::new(Composer::default());
    app.on_event(&session("0199a213-81c0-7800-8aa1-bbab2a035a53"));
    for c in "/harness".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    app.on_key(key(KeyCode::Enter));
    // codex, claude-code, …
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.harness_choice, Some(Harness::ClaudeCode));
    app.on_event(&session("0199a213-81c0-7800-8aa1-bbab2a035a54"));
    assert_eq!(app.harness_choice, Some(Harness::ClaudeCode));
    let (_home, base) = config();
    assert_ne!(base.harness, Harness::ClaudeCode);
    let next = with_choices(&base, app.approvals_choice, app.harness_choice);
    assert_eq!(next.harness, Harness::ClaudeCode);
    assert_eq!(
        next.approval_policy, base.approval_policy,
        "approvals untouched"
    );
}

#[test]
fn only_prompts_sent_to_the_model_go_to_the_prompt_history() {
    let mut app = App::new(Composer::default());
    app.on_event(&session("0199a213-81c0-7800-8aa1-bbab2a035a53"));
    for text in [
        "/status",
        "a real question",
        "/frobnicate",
        "/usr/bin/env is odd",
    ] {
        for c in text.chars() {
            app.on_key(key(KeyCode::Char(c)));
        }
        app.on_key(key(KeyCode::Enter));
    }
    assert_eq!(
        app.take_prompts_to_save(),
        ["a real question", "/usr/bin/env is odd"]
    );
    assert!(app.take_prompts_to_save().is_empty());
}
